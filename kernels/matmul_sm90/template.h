// The Hopper matmul template behind the MatmulTemplate face (kernels/matmul_template.h).
#pragma once

#include "kernels/matmul_template.h"

namespace mgpu::kernels::sm90 {

const MatmulTemplate& hopper_matmul();

}  // namespace mgpu::kernels::sm90
