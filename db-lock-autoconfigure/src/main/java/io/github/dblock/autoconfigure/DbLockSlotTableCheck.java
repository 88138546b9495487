package io.github.dblock.autoconfigure;

import java.util.List;

import io.github.dblock.jdbc.SlotRepository;
import io.github.dblock.scheduling.OncePerSlotAdvisor;

import org.springframework.beans.factory.SmartInitializingSingleton;
import org.springframework.beans.factory.config.ConfigurableListableBeanFactory;

/**
 * Fails start-up where beans have {@code @OncePerSlot} methods and the slot table cannot be
 * read (its migration not applied, {@code db-lock.schema.migrate=false}), naming the
 * methods, instead of letting every run be skipped with a WARN.
 */
final class DbLockSlotTableCheck implements SmartInitializingSingleton {

	private final ConfigurableListableBeanFactory beanFactory;

	DbLockSlotTableCheck(ConfigurableListableBeanFactory beanFactory) {
		this.beanFactory = beanFactory;
	}

	@Override
	public void afterSingletonsInstantiated() {
		OncePerSlotAdvisor advisor = this.beanFactory.getBeanProvider(OncePerSlotAdvisor.class).getIfUnique();
		SlotRepository slots = this.beanFactory.getBeanProvider(SlotRepository.class).getIfUnique();
		if (advisor == null || slots == null) {
			return;
		}
		List<String> methods = advisor.methods();
		if (methods.isEmpty()) {
			return;
		}
		String unavailable = slots.unavailable();
		if (unavailable != null) {
			throw new DbLockConfigurationException("@OncePerSlot methods " + methods + " cannot claim their slots: "
					+ unavailable + ".", "Let db-lock migrate its tables (db-lock.schema.migrate=true, the default), "
							+ "or apply db-lock's migration V10 (V10__create_slot_table.sql of your database) yourself.");
		}
	}

}
