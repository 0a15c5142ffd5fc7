from embconf.cli import entry

entry()
