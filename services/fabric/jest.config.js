module.exports = { ...require('../../jest.base.js'), setupFiles: [require.resolve('../../jest.internal-tls.js')] };
