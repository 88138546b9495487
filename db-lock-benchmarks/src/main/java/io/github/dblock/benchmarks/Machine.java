package io.github.dblock.benchmarks;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.LocalDate;
import java.util.stream.Stream;

/**
 * What the run ran on, for the report's heading.
 *
 * @param cores available processors
 * @param cpu the CPU model, if the OS tells
 * @param os operating system and architecture
 * @param java the Java runtime
 * @param database the database's version string
 * @param date the day of the run
 */
record Machine(int cores, String cpu, String os, String java, String database, LocalDate date) {

	static Machine describe(String databaseVersion) {
		return new Machine(Runtime.getRuntime().availableProcessors(), cpuModel(),
				System.getProperty("os.name") + " " + System.getProperty("os.version") + " " + System.getProperty("os.arch"),
				System.getProperty("java.vm.name") + " " + System.getProperty("java.runtime.version"),
				databaseVersion, LocalDate.now());
	}

	String summary() {
		return this.cores + " cores" + (this.cpu.isEmpty() ? "" : " (" + this.cpu + ")") + ", " + this.os + ", "
				+ this.java + "; database " + this.database;
	}

	private static String cpuModel() {
		Path cpuinfo = Path.of("/proc/cpuinfo");
		if (!Files.isReadable(cpuinfo)) {
			return "";
		}
		try (Stream<String> lines = Files.lines(cpuinfo)) {
			return lines.filter((line) -> line.startsWith("model name"))
				.map((line) -> line.substring(line.indexOf(':') + 1).trim())
				.findFirst()
				.orElse("");
		}
		catch (IOException ex) {
			return "";
		}
	}

}
