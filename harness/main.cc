#include "harness/cli.h"

int main(int argc, char** argv) { return mgpu::harness::run_cli(argc, argv); }
