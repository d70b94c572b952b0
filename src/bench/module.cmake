kforge_module(bench DEPS kforge_common kforge_cuda kforge_verify)
