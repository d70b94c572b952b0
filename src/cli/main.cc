// kforge entry point: everything happens in kforge::cli::Main.
#include "cli/command.h"

int main(int argc, char** argv) { return kforge::cli::Main(argc, argv); }
