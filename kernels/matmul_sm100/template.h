// The Blackwell matmul template behind the MatmulTemplate face (kernels/matmul_template.h).
#pragma once

#include "kernels/matmul_template.h"

namespace mgpu::kernels::sm100 {

const MatmulTemplate& blackwell_matmul();

}  // namespace mgpu::kernels::sm100
