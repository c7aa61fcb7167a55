# frozen_string_literal: true

# Loads the compiled extension; one that exists but fails to load raises. RbConfig is required: Ruby 3.4 no longer
# loads it first under --disable-gems.
require "rbconfig"

ruby_minor = RUBY_VERSION[/\A\d+\.\d+/]
native_dir = File.expand_path("../lease_machines_native", __dir__)
dlext = RbConfig::CONFIG.fetch("DLEXT")
versioned = File.join(native_dir, ruby_minor, "lease_machines_native")
if File.exist?("#{versioned}.#{dlext}")
  require versioned
else
  held = Dir.glob("*/lease_machines_native.#{dlext}", base: native_dir).map { |lib| File.dirname(lib) }
  unless held.empty? || File.exist?(File.join(native_dir, "lease_machines_native.#{dlext}"))
    raise LoadError, "lease_machines: this platform gem holds native libraries for Ruby #{held.sort.join(', ')}, " \
                     "not for Ruby #{RUBY_VERSION}; install the source gem instead " \
                     "(gem install lease_machines --platform ruby, which builds with cargo)"
  end

  require "lease_machines_native/lease_machines_native"
end
