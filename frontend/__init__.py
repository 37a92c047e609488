"""PTX frontend: PLY lexer and parser, AST, semantic checks, SSA construction."""
