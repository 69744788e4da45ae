#pragma once

namespace tandem {

/// The library's version, "MAJOR.MINOR.PATCH".
const char* version();

}  // namespace tandem
