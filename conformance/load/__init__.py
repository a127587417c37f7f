"""Stage 1, load: read the case files (cases/*.yaml), check them against the schema, the limits
and the operator table, and build Case objects."""
