"""Every section's settings class, on the ground floor (docs/config.md, "Settings classes"): these
modules import only the standard library and each other, so the workflow builds and checks every
section when it is parsed, and the config schema is generated from them (srrg.config_tree)."""
