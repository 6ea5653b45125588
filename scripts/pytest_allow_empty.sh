#!/usr/bin/env bash
# pytest exits 5 when a marker selects no test; that is not a failure of the suite.
"$@"; rc=$?
if [ "$rc" = "5" ]; then echo "no tests selected by this marker"; exit 0; fi
exit $rc
