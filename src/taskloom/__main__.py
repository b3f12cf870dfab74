from taskloom.cli import run

run()
