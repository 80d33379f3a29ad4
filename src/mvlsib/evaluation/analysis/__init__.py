"""Reading finished runs: reports, tables, figures, leaderboard, paired comparison, items, correlation."""
