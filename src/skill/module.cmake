# Agent Skills: the folder format and its check, skills in a generate run, the lift a skill gives (kforge skill).
kforge_module(skill DEPS kforge_common kforge_llm kforge_dataset kforge_generate)
