package io.github.dblock.autoconfigure;

import java.util.Arrays;
import java.util.List;
import java.util.Map;

import com.zaxxer.hikari.HikariDataSource;
import io.github.dblock.jdbc.dialect.SqlDialect;
import io.github.dblock.testsupport.TestDatabase;
import org.flywaydb.core.Flyway;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Tests for {@link DbLockSchemaMigration#migrations()} on every database: what Flyway's
 * own info lists, read without a Flyway command.
 */
class DbLockSchemaMigrationTests {

	@ParameterizedTest
	@EnumSource(TestDatabase.class)
	void migrationsAreWhatFlywayListsForTheHistoryTable(TestDatabase database) {
		try (HikariDataSource dataSource = database.dataSource(2)) {
			SqlDialect dialect = database.dialect(dataSource);
			List<DbLockSchemaMigration.Migration> migrations = new DbLockSchemaMigration(dataSource, dialect).migrations();
			// a database that held other tables when db-lock first migrated it has Flyway's baseline first
			List<DbLockSchemaMigration.Migration> applied = migrations.stream()
				.filter((migration) -> !migration.state().equals("BASELINE"))
				.toList();
			assertThat(applied).isNotEmpty()
				.allSatisfy((migration) -> assertThat(migration.state()).isEqualTo("SUCCESS"));
			assertThat(applied).first().extracting(DbLockSchemaMigration.Migration::version).isEqualTo("1");
			assertThat(migrations).containsExactlyElementsOf(flywayInfo(dataSource, dialect));
		}
	}

	private static List<DbLockSchemaMigration.Migration> flywayInfo(HikariDataSource dataSource, SqlDialect dialect) {
		return Arrays.stream(Flyway.configure()
			.dataSource(dataSource)
			.locations(dialect.database().migrationLocation())
			.table(dialect.table() + "_schema_history")
			.placeholders(Map.of("table", dialect.table()))
			.load()
			.info()
			.all())
			.map((info) -> new DbLockSchemaMigration.Migration(String.valueOf(info.getVersion()), info.getDescription(),
					info.getState().name(), (info.getInstalledOn() != null) ? info.getInstalledOn().toInstant() : null))
			.toList();
	}

}
