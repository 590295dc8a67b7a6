"""Fine-tuned LLM judges (VERT LoRA recipe, GREEN-style distillation): ratings table -> supervised
examples split by case (dataset), LoRA/QLoRA training and merged export (train), tuned vs zero-shot
correlation tables (compare); the commands are srrg.stages.judge_train_*. Heavy imports (torch, peft) stay inside
train.py so that preparing data does not load them."""
