"""One module per workflow stage: the module name is the Snakemake rule name and, with '-' for '_',
the `srrg` subcommand (docs/cli.md). Each module defines HELP, add_arguments(parser) and run(args);
srrg.cli parses arguments and maps errors to exit codes. Modules starting with '_' are helpers.
"""
