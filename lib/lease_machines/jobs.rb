# frozen_string_literal: true

require "lease_machines"
require_relative "jobs/lease_option"
require_relative "jobs/leased_run"
require_relative "jobs/enqueue_check"
