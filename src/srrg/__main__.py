from srrg.cli import main

raise SystemExit(main())
