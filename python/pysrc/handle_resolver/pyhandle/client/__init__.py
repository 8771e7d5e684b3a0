"""pyhandle's ``client`` package: ``resthandleclient``."""
