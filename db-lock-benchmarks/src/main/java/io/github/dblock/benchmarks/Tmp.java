package io.github.dblock.benchmarks; class Tmp {}
