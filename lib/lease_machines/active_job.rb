# frozen_string_literal: true

require "active_job"
require "lease_machines"
require_relative "jobs"
require_relative "active_job/leased_job"

module LeaseMachines
  # ActiveJob jobs that hold a lease while they run (docs/JOBS.md), through public API only (Rails 6.1 to 8).
  module ActiveJob
    def self.included(job_class) = job_class.include(LeasedJob)
  end
end
