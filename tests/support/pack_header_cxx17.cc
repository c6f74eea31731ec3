// mgpu_pack.h as a C++17 consumer compiles it (-std=c++17 -Wall -Wextra -Werror): the header is
// the pack's ABI, so it must hold for the toolchains users have, not only for ours.
#include "mgpu_pack.h"

const char* mgpu_pack_header_cxx17_status_name() { return mgpu_status_name(MGPU_OK); }
