from envhub.cli import console

console()
