kforge_module(dataset DEPS kforge_common)
