# Fine-tuning launches: dataset checks, trainer configs (TRL, axolotl), launchers, run manifests.
kforge_module(finetune DEPS kforge_common)
