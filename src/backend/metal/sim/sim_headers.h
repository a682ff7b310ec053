// The headers metal-sim puts on the include path of every MSL build: its <metal_stdlib> (Metal's
// types, qualifiers, attributes, as_type, barriers, maths) and the launcher runtime the
// generated launcher includes after the MSL file. Their text is part of the compiler identity.
#pragma once

namespace lockstep::metal::sim {

const char* metal_stdlib_text();
const char* launch_header_text();

}  // namespace lockstep::metal::sim
