// The kit's own tests load its sources: they hold the internal identities through them.
module.exports = { ...require('../../jest.base.js'), setupFiles: ['<rootDir>/jest.setup.js'] };
