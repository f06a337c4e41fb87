"""`sslperf noise`: this machine's noise floor, from an A/A experiment — the
same library as two columns of one run, and the same run repeated back to
back. No change smaller than the floor is ever called a change."""
