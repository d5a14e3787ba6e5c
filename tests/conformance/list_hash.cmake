# list.h, hlist, hash.h, hashtable.h conformance
