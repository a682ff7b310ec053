// The two halves of the decoder; vits.cpp joins them.
#pragma once
#include "emitter.h"
#include "vits.h"

namespace lockstep::vits {

// ResidualCouplingBlock in the inference direction (reverse=True): flips and coupling layers
// from the last to the first. Returns z.
int flow_reverse(Emitter& e, int z_p, int mask, const FlowSizes& s);

// HiFi-GAN generator `dec` on x [1,C,T]; returns [1,1,T*prod(rates)] after tanh.
int generator(Emitter& e, int x, int64_t in_channels, const DecSizes& s);

// torch.repeat_interleave(mask, hop, dim=2) as torch.onnx writes it: Unsqueeze, Tile, then
// flatten through Shape/Slice/Concat/Reshape; the dynamo exporter: Unsqueeze, Expand, Reshape.
int repeat_interleave_time(Emitter& e, const Path& p, int mask, int64_t hop);

}  // namespace lockstep::vits
