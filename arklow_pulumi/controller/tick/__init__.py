"""One controller tick, observe → decide → act → publish, its steps, what it stores, and
`arklow controller plan` (the same observe and decide, nothing acted)."""
