#pragma once
// How tandem-view shows a frame: 8-bit frames as they are; float frames as linear light clamped
// to 0..1 and sRGB-encoded, as tonemap=op=linear (and a display) would show them, not as the
// linear values themselves (a radiance map would look nearly black).
#include "tandem/frame.hpp"

namespace tandem::view {

/// `frame` as the 8-bit sRGB picture to show: itself when rgba8, else a new rgba8 frame.
Frame for_display(const Frame& frame);

}  // namespace tandem::view
