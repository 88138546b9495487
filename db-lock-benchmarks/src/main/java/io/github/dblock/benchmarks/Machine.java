package io.github.dblock.benchmarks;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.LocalDate;
import java.util.stream.Stream;

/**
 * What the run ran on, for the report's heading, with the load average before and after:
 * other processes on the machine make a run noisy, and the reader should know.
 *
 * @param cores available processors
 * @param cpu the CPU model, if the OS tells
 * @param os operating system and architecture
 * @param java the Java runtime
 * @param database the database's version string
 * @param date the day of the run
 * @param loadBefore the 1-minute load average when the run started, if the OS tells
 * @param loadAfter the 1-minute load average when it ended
 */
record Machine(int cores, String cpu, String os, String java, String database, LocalDate date, String loadBefore,
		String loadAfter) {

	static Machine describe(BenchSettings settings) throws SQLException {
		return new Machine(Runtime.getRuntime().availableProcessors(), cpuModel(),
				System.getProperty("os.name") + " " + System.getProperty("os.version") + " " + System.getProperty("os.arch"),
				System.getProperty("java.vm.name") + " " + System.getProperty("java.runtime.version"),
				databaseVersion(settings), LocalDate.now(), loadAverage(), "");
	}

	Machine finished() {
		return new Machine(this.cores, this.cpu, this.os, this.java, this.database, this.date, this.loadBefore,
				loadAverage());
	}

	String summary() {
		return this.cores + " cores" + (this.cpu.isEmpty() ? "" : " (" + this.cpu + ")") + ", " + this.os + ", "
				+ this.java + "; database " + this.database;
	}

	/** The database and its version, short: "MariaDB 10.11.19", "PostgreSQL 15.20". */
	String databaseShort() {
		String[] words = this.database.split("[ -]");
		if (this.database.startsWith("PostgreSQL") && words.length > 1) {
			return "PostgreSQL " + words[1];
		}
		if (this.database.contains("MariaDB")) {
			return "MariaDB " + words[0];
		}
		return "MySQL " + words[0];
	}

	String load() {
		return this.loadBefore.isEmpty() ? "" : "load average " + this.loadBefore + " at the start, " + this.loadAfter
				+ " at the end";
	}

	private static String databaseVersion(BenchSettings settings) throws SQLException {
		try (Connection connection = DriverManager.getConnection(settings.url(), settings.user(), settings.password());
				Statement statement = connection.createStatement();
				ResultSet rs = statement.executeQuery("SELECT VERSION()")) {
			rs.next();
			return rs.getString(1);
		}
	}

	private static String cpuModel() {
		try (Stream<String> lines = Files.lines(Path.of("/proc/cpuinfo"))) {
			return lines.filter((line) -> line.startsWith("model name"))
				.map((line) -> line.substring(line.indexOf(':') + 1).trim())
				.findFirst()
				.orElse("");
		}
		catch (IOException ex) {
			return "";
		}
	}

	private static String loadAverage() {
		try {
			return Files.readString(Path.of("/proc/loadavg")).split(" ")[0];
		}
		catch (IOException ex) {
			return "";
		}
	}

}
