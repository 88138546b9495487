package io.github.dblock.jpa;

import org.springframework.data.jpa.repository.JpaRepository;

/** Spring Data access to the counters. */
public interface JpaCounterRepository extends JpaRepository<JpaCounter, Long> {

}
