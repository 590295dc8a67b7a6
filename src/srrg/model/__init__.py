"""Image-to-report models: timm encoder + MLP projector + frozen causal LLM, or a Transformer-decoder
baseline; Lightning training (train.py) and the shared network used by inference (network.py).

Submodules are imported on use so that `import srrg.model` stays cheap."""
