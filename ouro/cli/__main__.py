from ouro.cli import main

main()
