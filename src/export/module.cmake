kforge_module(export DEPS kforge_common kforge_llm kforge_dataset)
