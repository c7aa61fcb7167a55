# frozen_string_literal: true

require "active_record"
require "lease_machines/fences"
require_relative "active_record/row_admission"
require_relative "active_record/fence_column"
require_relative "active_record/upsert"
require_relative "active_record/record"
