# frozen_string_literal: true

# Loads the compiled extension. A precompiled platform gem keeps one library per
# Ruby minor version under lib/lease_machines_native/<major.minor>/; a gem built
# from source installs one library at lib/lease_machines_native/. A library that
# exists but fails to load raises: it is never silently skipped.
ruby_minor = RUBY_VERSION[/\A\d+\.\d+/]
versioned = File.expand_path("../lease_machines_native/#{ruby_minor}/lease_machines_native", __dir__)
if File.exist?("#{versioned}.#{RbConfig::CONFIG.fetch('DLEXT')}")
  require versioned
else
  require "lease_machines_native/lease_machines_native"
end
