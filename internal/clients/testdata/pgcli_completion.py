"""Runs the catalog queries pgcli issues to build its name completions,
through pgcli's own PGExecute, and checks that this run's objects are
among the completions.

Connection settings come from the environment (PGHOST, PGPORT, PGUSER,
PGDATABASE); SCENARIO_PREFIX names the objects the scenario created.
"""
import os

from pgcli.completion_refresher import CompletionRefresher
from pgcli.pgcompleter import PGCompleter
from pgcli.pgexecute import PGExecute
from prompt_toolkit.document import Document

P = os.environ["SCENARIO_PREFIX"]


def expect(cond, what):
    if not cond:
        raise AssertionError(what)


ex = PGExecute(os.environ["PGDATABASE"], os.environ["PGUSER"], None, os.environ["PGHOST"], os.environ["PGPORT"])
expect("public" in ex.search_path(), f"search_path {ex.search_path()}")
schemata = list(ex.schemata())
expect("public" in schemata, f"schemata {schemata}")
tables = list(ex.tables())
expect(("public", f"{P}_orders") in tables, f"tables {tables}")
views = list(ex.views())
expect(("public", f"{P}_totals") in views, f"views {views}")
cols = [(c[1], c[2]) for c in ex.table_columns() if c[1] == f"{P}_orders"]
expect([c[1] for c in cols] == ["id", "customer", "amount"], f"table columns {cols}")
vcols = [c[2] for c in ex.view_columns() if c[1] == f"{P}_totals"]
expect(vcols == ["customer", "total", "n"], f"view columns {vcols}")
list(ex.functions())
list(ex.datatypes())
list(ex.databases())
list(ex.foreignkeys())
ex.casing()

# The refresher that the interactive shell runs in the background, run in
# the foreground: it must complete without errors and offer our names.
completer = PGCompleter()
refresher = CompletionRefresher()
for name, fn in refresher.refreshers.items():
    fn(completer, ex)
names = {c.text for c in completer.get_completions(Document("SELECT * FROM "), None)}
expect(f"{P}_orders" in names and f"{P}_totals" in names, f"completions {sorted(names)[:50]}")
print("ok")
