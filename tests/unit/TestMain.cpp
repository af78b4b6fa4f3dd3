// tests/unit/TestMain.cpp — doctest's main, shared by every unit test executable.
#define DOCTEST_CONFIG_IMPLEMENT_WITH_MAIN
#include <doctest/doctest.h>
