"""Where the tests find the repository, their fixtures and the public data read in place.

Test files sit one folder below tests/ (grouped by what they test); these constants keep them from
counting parent folders. SHARED_DATA is the `shared/data/` folder beside the checkout: real public
data that is never copied into the repository (tests that need it skip when it is absent).
"""

from __future__ import annotations

from pathlib import Path

TESTS = Path(__file__).resolve().parent
REPO = TESTS.parent
FIXTURES = TESTS / "fixtures"
TEST_DATA = TESTS / "data"
BENCHMARKS = REPO / "benchmarks"
TOOLS = REPO / "tools"
SHARED_DATA = REPO.parent / "shared" / "data"
