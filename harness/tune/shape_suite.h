// A shape suite to tune in turn: read from a .json or .csv file, or a named suite
// (kernels/matmul_suites.h). Contract: load_shape_suite() returns the shapes in file order,
// duplicates dropped; a row that cannot be read throws Error{InvalidInput} naming the file
// and the row ("shapes.csv line 4: ..."). Rows may leave dtype, out_dtype and layout out:
// `defaults` fills them (the command line's --dtype/--out-dtype/--layout).
//   CSV:  m,n,k[,dtype[,out_dtype[,layout]]] per line (LF or CRLF), '#' comments; an optional
//         header line naming the columns in any order (m, n, k, dtype, out_dtype, layout, and
//         name and note, which are read by people only): a first row is a header when it names
//         one of them or holds no number; a column named twice or unknown is refused. A leading
//         UTF-8 byte order mark is skipped (UTF-16 is refused). m, n and k are whole numbers in
//         1..2^31-1, said of the column ("k must be ..."), never of a flag.
//   JSON: [{"m":..,"n":..,"k":..,"dtype":..,"out_dtype":..,"layout":..}, ...] or
//         {"name": "...", "shapes": [...]}.
// grid_buckets() groups shapes that run the same padded tile grids for every config of the
// template (MatmulTemplate::grid_units): tuning one of a bucket tunes them all.
#pragma once

#include <string>
#include <vector>

#include "kernels/matmul_problem.h"
#include "kernels/matmul_template.h"

namespace mgpu::harness {

struct ShapeSuite {
  std::string name;
  std::vector<kernels::MatmulProblem> shapes;
  int duplicates_dropped = 0;
  std::vector<std::string> where;  // per shape, where it was read: "s.csv line 3", "s.json shape #2"
};

ShapeSuite load_shape_suite(const std::string& file_or_name, const kernels::MatmulProblem& defaults);
// Every shape against the template's own limits (TMA alignment, ...): Error{InvalidInput} naming
// the row where it was read ("s.csv line 3: ..."), as a row the reader refused is.
void check_suite_shapes(const ShapeSuite& suite, const kernels::MatmulTemplate& t);
std::vector<std::vector<size_t>> grid_buckets(const kernels::MatmulTemplate& t,
                                              const std::vector<kernels::MatmulProblem>& shapes);

}  // namespace mgpu::harness
