"""One module per ``graphlab`` subcommand: ``HELP``, ``add_arguments(parser)``, ``run(args)``."""
