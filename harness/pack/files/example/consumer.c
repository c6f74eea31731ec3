/* The pack's header in a C11 program built with -Wall -Wextra -pedantic -Werror: it lists what
 * the pack holds. Run it anywhere: it needs no GPU. */
#include <stdio.h>

#include "mgpu_pack.h"

int main(void) {
  int i;
  for (i = 0; i < mgpu_pack_entry_count(); ++i) {
    mgpu_pack_entry_info info;
    if (mgpu_pack_entry(i, &info) != MGPU_OK) {
      fprintf(stderr, "entry %d: %s\n", i, mgpu_last_error());
      return 1;
    }
    printf("%d %s %s %s %s %s %s\n", i, info.template_name, info.arch, info.problem_key, info.source,
           info.verification, info.config_json);
  }
  return 0;
}
