#include "tandem/version.hpp"

namespace tandem {

const char* version() { return TANDEM_VERSION; }

}  // namespace tandem
