package io.github.dblock.jpa;

import jakarta.persistence.Entity;
import jakarta.persistence.Id;
import jakarta.persistence.Table;

/** A counter row, read and written through Hibernate. */
@Entity
@Table(name = "db_lock_test_jpa_counter")
public class JpaCounter {

	@Id
	private Long id;

	private long counterValue;

	protected JpaCounter() {
	}

	public JpaCounter(Long id) {
		this.id = id;
	}

	public Long getId() {
		return this.id;
	}

	public long getCounterValue() {
		return this.counterValue;
	}

	public void increment() {
		this.counterValue++;
	}

}
