"""One module per paper: its figures as recipes and its claims as checks (see hfcsim.reproduce)."""
