# bits.h, bitops.h, find.h, bitmap.h conformance
