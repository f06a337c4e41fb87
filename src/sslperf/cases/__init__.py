"""What a case is, without a harness: the catalog (data from the harness's C tables), case ids parsed and made
from its templates, and the table a case's results go in. Core: imports nothing above results."""
