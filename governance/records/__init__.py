"""What keeps the records consistent: judge families, links between configurations, writes, signals, permissions and bulk edits."""
